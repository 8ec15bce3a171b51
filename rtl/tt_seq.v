`default_nettype none
// tt_seq: the sequencer. Executes a program from the program memory (golden/program.py has the format):
// fetch an op record's header, load its payload into the descriptor register, give the op to its unit
// (tt_contract, tt_ewise, tt_sce, tt_rank), wait for the unit, fold the op's saturation count and max |x| into the
// statistics slot of its destination tensor, and go on with the next record until an END header.
//
// The random stream (SPEC 3) is one stream: this module holds its state between ops, loads it into the
// unit that runs an op (seed_load with the state's preimage, one cycle) and takes the advanced state back
// when the op is done (the contraction engine and the element-wise unit: tt_sce and tt_rank draw nothing). The host sets it with seed_load / seed like tt_lfsr.
//
// Per op: 1 fetch cycle + 1 header cycle + nwords load cycles + 1 seed cycle + 1 start cycle + the unit's
// cycles + 1 statistics cycle (golden/program.py's records; the benchmark reports this overhead). The fetch
// cycle covers the program memory's output register: the header decode starts from a flip-flop.
//
// Errors are states: the sequencer stops (busy low, error high), keeps the op's pc and the reason, and
// leaves every memory readable until clear_error. Codes: 1 illegal op (unknown kind, or a payload length
// that is not its unit's: an element-wise record may stop before the tables' addresses, EW_SHORT_WORDS, a contraction
// before its preload's fields, CT_SHORT_WORDS, and the descriptor bits it does not load read as 0; a RANK record
// when the rank unit is not built), 2 the program runs off the program memory, 3 an address outside every bank,
// 4 a bank asked for more reads in a cycle than it has ports, 5 the unit refused the descriptor
// (unit_error_code says why, the unit's own code), 6 a start arrived while busy (the running op finishes,
// then the program stops).
module tt_seq #(
  parameter integer PROG_AW    = 11,    // program memory address width
  parameter integer PROG_DEPTH = 2048,  // program words, <= 2^PROG_AW
  parameter integer MAX_W      = 16,    // width of the units' max |x| outputs
  parameter integer DESC_BITS  = 1504,  // descriptor register: 32 x DESC_WORDS of tt_desc_fields.vh
  parameter integer RANK       = 0      // 1: the rank unit (unit 3) is built, RANK records are legal
) (
  input  wire                    clk,
  input  wire                    rst,
  // host control
  input  wire                    start,
  input  wire [PROG_AW-1:0]      start_pc,
  input  wire                    clear_error,
  input  wire                    clear_counters,
  input  wire                    seed_load,
  input  wire [31:0]             seed,
  output wire [31:0]             lfsr_state,
  output wire                    busy,
  output wire                    done,
  output wire                    error,
  output wire [3:0]              error_code,
  output wire [3:0]              error_unit_code,
  output wire [PROG_AW-1:0]      error_pc,
  output wire [PROG_AW-1:0]      pc,
  // program memory (read latency 2: the RAM and its output register)
  output reg                     prog_rd_en,
  output reg  [PROG_AW-1:0]      prog_rd_addr,
  input  wire [31:0]             prog_rd_data,
  // the op in flight
  output wire [DESC_BITS-1:0]    desc,
  output wire [1:0]              unit,            // 0 contract, 1 element-wise, 2 softmax cross-entropy, 3 rank
  output wire [3:0]              unit_start,      // one-hot by unit
  output wire                    unit_seed_load,
  output wire [31:0]             unit_seed,
  input  wire [3:0]              unit_done,
  input  wire [3:0]              unit_error,
  input  wire [15:0]             unit_error_code,
  input  wire [127:0]            unit_sat,
  input  wire [4*MAX_W-1:0]      unit_maxabs,
  input  wire [63:0]             unit_lfsr,       // contract, element-wise (tt_sce and tt_rank draw nothing)
  input  wire                    mem_addr_err,
  input  wire                    mem_port_err,
  // statistics slots: host access while idle (read latency 1)
  input  wire                    stat_rd_en,
  input  wire [5:0]              stat_rd_addr,
  output wire [31:0]             stat_rd_sat,
  output wire [MAX_W-1:0]        stat_rd_max,
  input  wire                    stat_wr_sat_en,  // host write of a slot's saturation count
  input  wire                    stat_wr_max_en,  // ... or of its max register
  input  wire [5:0]              stat_wr_addr,
  input  wire [31:0]             stat_wr_data,
  // performance counters
  output wire [63:0]             cycles,          // busy cycles
  output wire [255:0]            unit_cycles,     // cycles each unit held an op (start to done), by unit
  output wire [31:0]             ops,             // ops completed
  output wire [31:0]             sat_total        // saturations of every op, saturating
);

`include "tt_desc_fields.vh"
  localparam [31:0] SEED_XOR = 32'hA5A5_A5A5;
  localparam [3:0] ERR_NONE = 4'd0;
  localparam [3:0] ERR_ILLEGAL = 4'd1;
  localparam [3:0] ERR_OVERRUN = 4'd2;
  localparam [3:0] ERR_ADDR = 4'd3;
  localparam [3:0] ERR_PORT = 4'd4;
  localparam [3:0] ERR_UNIT = 4'd5;
  localparam [3:0] ERR_BUSY = 4'd6;
  localparam [3:0] S_IDLE = 4'd0;
  localparam [3:0] S_HDR = 4'd1;
  localparam [3:0] S_LOAD = 4'd2;
  localparam [3:0] S_SEED = 4'd3;
  localparam [3:0] S_START = 4'd4;
  localparam [3:0] S_WAIT = 4'd5;
  localparam [3:0] S_STAT = 4'd6;
  localparam [3:0] S_ERR = 4'd7;
  localparam [3:0] S_FETCH = 4'd8;  // the header's read is in flight
  localparam [PROG_AW:0] DEPTH = PROG_DEPTH[PROG_AW:0];

  generate
    if (PROG_DEPTH < 2 || PROG_DEPTH > (1 << PROG_AW)) begin : g_bad_depth
      error_tt_seq_PROG_DEPTH_must_be_2_to_2_pow_PROG_AW u_error ();
    end
    if (DESC_BITS != 32 * DESC_WORDS) begin : g_bad_desc_bits
      error_tt_seq_DESC_BITS_must_be_32_times_DESC_WORDS u_error ();
    end
    if (MAX_W < 2 || MAX_W > 32) begin : g_bad_max_w
      error_tt_seq_MAX_W_must_be_2_to_32 u_error ();
    end
    if (RANK < 0 || RANK > 1) begin : g_bad_rank
      error_tt_seq_RANK_must_be_0_or_1 u_error ();
    end
  endgenerate

  reg [3:0]         state_q;
  reg [PROG_AW-1:0] pc_q;
  reg [PROG_AW-1:0] rd_ptr_q;      // the program word the next read takes (a register: the BRAM address path)
  reg               next_fits_q;   // next_fits, registered in S_SEED (pc_q and hdr_q hold until S_STAT)
  reg [31:0]        hdr_q;
  reg [7:0]         widx_q;        // payload word being loaded
  reg [DESC_BITS-1:0] desc_q;
  reg [1:0]         unit_q;
  reg               done_q;
  reg [3:0]         err_q;
  reg [3:0]         err_unit_q;
  reg               abort_q;       // a start arrived while busy
  reg               mem_addr_err_q;
  reg               mem_port_err_q;
  reg [31:0]        lfsr_q;

  wire [HDR_KIND_W-1:0]   h_kind = prog_rd_data[HDR_KIND_W-1:0];
  wire [HDR_NWORDS_W-1:0] h_nwords = prog_rd_data[HDR_NWORDS_LSB +: HDR_NWORDS_W];
  wire [HDR_NWORDS_W-1:0] n_words = hdr_q[HDR_NWORDS_LSB +: HDR_NWORDS_W];
  wire [5:0]              slot = hdr_q[HDR_SLOT_LSB +: HDR_SLOT_W];
  wire                    observe = hdr_q[HDR_OBSERVE_BIT];

  // The payload length each kind must have, and the unit that runs it.
  reg       h_legal;
  reg [1:0] h_unit;
  always @* begin
    case (h_kind)
      KIND_CONTRACT: begin h_legal = (h_nwords == CT_WORDS[HDR_NWORDS_W-1:0]) ||
                                     (h_nwords == CT_SHORT_WORDS[HDR_NWORDS_W-1:0]); h_unit = 2'd0; end
      KIND_EWISE:    begin h_legal = (h_nwords == EW_WORDS[HDR_NWORDS_W-1:0]) ||
                                     (h_nwords == EW_SHORT_WORDS[HDR_NWORDS_W-1:0]); h_unit = 2'd1; end
      KIND_SCE:      begin h_legal = (h_nwords == SCE_WORDS[HDR_NWORDS_W-1:0]); h_unit = 2'd2; end
      KIND_RANK:     begin h_legal = (RANK != 0) && (h_nwords == RK_WORDS[HDR_NWORDS_W-1:0]); h_unit = 2'd3; end
      default:       begin h_legal = 1'b0;                                      h_unit = 2'd0; end
    endcase
  end

  // The record must end inside the program memory (pc + nwords <= PROG_DEPTH - 1).
  wire [PROG_AW+8:0] h_last = {9'd0, pc_q} + {{(PROG_AW+1){1'b0}}, h_nwords};
  wire               h_fits = h_last < {8'd0, DEPTH};
  wire [PROG_AW+8:0] next_pc = {9'd0, pc_q} + {{(PROG_AW+1){1'b0}}, n_words} + 1;
  wire               next_fits = next_pc < {8'd0, DEPTH};

  // ---- statistics slots ----
  reg [31:0]      sat_mem [0:63];
  reg [MAX_W-1:0] max_mem [0:63];
  reg [31:0]      stat_sat_q;
  reg [MAX_W-1:0] stat_max_q;
  // The op's slot is read in S_SEED and copied into flip-flops in S_START (a unit takes at least two cycles),
  // so S_STAT's read-modify-write starts from a flip-flop, not from the slot memory's clock-to-out.
  wire            seq_stat_rd = (state_q == S_SEED);
  wire [5:0]      stat_addr = seq_stat_rd ? slot : stat_rd_addr;
  always @(posedge clk) begin
    if (seq_stat_rd || stat_rd_en) begin
      stat_sat_q <= sat_mem[stat_addr];
      stat_max_q <= max_mem[stat_addr];
    end
  end
  assign stat_rd_sat = stat_sat_q;
  assign stat_rd_max = stat_max_q;

  reg [31:0]      slot_sat_q;
  reg [MAX_W-1:0] slot_max_q;
  always @(posedge clk) begin
    if (state_q == S_START) begin
      slot_sat_q <= stat_sat_q;
      slot_max_q <= stat_max_q;
    end
  end

  wire [31:0]      op_sat = unit_sat[32*unit_q +: 32];
  wire [MAX_W-1:0] op_max = unit_maxabs[MAX_W*unit_q +: MAX_W];
  wire [32:0]      sat_sum = {1'b0, slot_sat_q} + {1'b0, op_sat};
  wire [32:0]      total_sum = {1'b0, sat_total_q} + {1'b0, op_sat};
  reg  [31:0]      sat_total_q;
  always @(posedge clk) begin
    if (state_q == S_STAT) begin
      sat_mem[slot] <= sat_sum[32] ? 32'hFFFF_FFFF : sat_sum[31:0];
      max_mem[slot] <= (observe && op_max > slot_max_q) ? op_max : slot_max_q;
    end else begin
      if (stat_wr_sat_en) begin
        sat_mem[stat_wr_addr] <= stat_wr_data;
      end
      if (stat_wr_max_en) begin
        max_mem[stat_wr_addr] <= stat_wr_data[MAX_W-1:0];
      end
    end
  end

  // ---- control ----
  wire running = (state_q != S_IDLE) && (state_q != S_ERR);

  always @* begin
    prog_rd_en = 1'b0;
    prog_rd_addr = pc_q;
    // Reads run two words ahead of the record (the memory's read latency): S_FETCH pc + 1, S_HDR pc + 2, S_LOAD
    // pc + 3 + widx, S_STAT the next header; rd_ptr_q holds that address, so no adder sits before the BRAM.
    case (state_q)
      S_IDLE:  begin prog_rd_en = start; prog_rd_addr = start_pc; end
      S_FETCH, S_HDR, S_LOAD: begin prog_rd_en = 1'b1; prog_rd_addr = rd_ptr_q; end
      S_STAT:  begin prog_rd_en = next_fits_q; prog_rd_addr = rd_ptr_q; end
      default: begin prog_rd_en = 1'b0; prog_rd_addr = pc_q; end
    endcase
  end

  task automatic fail(input [3:0] code);
    begin
      state_q <= S_ERR;
      err_q <= code;
    end
  endtask

  always @(posedge clk) begin
    if (rst) begin
      state_q <= S_IDLE;
      pc_q <= {PROG_AW{1'b0}};
      rd_ptr_q <= {PROG_AW{1'b0}};
      next_fits_q <= 1'b0;
      hdr_q <= 32'd0;
      widx_q <= 8'd0;
      unit_q <= 2'd0;
      done_q <= 1'b0;
      err_q <= ERR_NONE;
      err_unit_q <= 4'd0;
      abort_q <= 1'b0;
      mem_addr_err_q <= 1'b0;
      mem_port_err_q <= 1'b0;
    end else begin
      if (start && running) begin
        abort_q <= 1'b1;
      end
      case (state_q)
        S_IDLE: begin
          if (start) begin
            pc_q <= start_pc;
            rd_ptr_q <= start_pc + 1'b1;
            done_q <= 1'b0;
            abort_q <= 1'b0;
            if ({1'b0, start_pc} >= DEPTH) begin
              fail(ERR_OVERRUN);
            end else begin
              state_q <= S_FETCH;
            end
          end
        end
        S_FETCH: begin
          state_q <= S_HDR;
          rd_ptr_q <= rd_ptr_q + 1'b1;
        end
        S_HDR: begin
          rd_ptr_q <= rd_ptr_q + 1'b1;
          hdr_q <= prog_rd_data;
          widx_q <= 8'd0;
          unit_q <= h_unit;
          if (abort_q) begin
            fail(ERR_BUSY);
          end else if (h_kind == KIND_END) begin
            state_q <= S_IDLE;
            done_q <= 1'b1;
          end else if (!h_legal) begin
            fail(ERR_ILLEGAL);
          end else if (!h_fits) begin
            fail(ERR_OVERRUN);
          end else begin
            state_q <= S_LOAD;
          end
        end
        S_LOAD: begin
          rd_ptr_q <= rd_ptr_q + 1'b1;
          widx_q <= widx_q + 8'd1;
          if (widx_q + 8'd1 == n_words) begin
            state_q <= S_SEED;
          end
        end
        S_SEED: begin
          state_q <= S_START;
          rd_ptr_q <= next_pc[PROG_AW-1:0];
          next_fits_q <= next_fits;
          mem_addr_err_q <= 1'b0;
          mem_port_err_q <= 1'b0;
        end
        S_START: begin
          state_q <= S_WAIT;
        end
        S_WAIT: begin
          mem_addr_err_q <= mem_addr_err_q || mem_addr_err;
          mem_port_err_q <= mem_port_err_q || mem_port_err;
          if (unit_done[unit_q]) begin
            err_unit_q <= unit_error_code[4*unit_q +: 4];
            if (unit_error[unit_q]) begin
              fail(ERR_UNIT);
            end else if (mem_addr_err_q || mem_addr_err) begin
              fail(ERR_ADDR);
            end else if (mem_port_err_q || mem_port_err) begin
              fail(ERR_PORT);
            end else begin
              state_q <= S_STAT;
            end
          end
        end
        S_STAT: begin
          pc_q <= next_pc[PROG_AW-1:0];
          rd_ptr_q <= rd_ptr_q + 1'b1;
          if (next_fits_q) begin
            state_q <= S_FETCH;
          end else begin
            fail(ERR_OVERRUN);
          end
        end
        S_ERR: begin
          if (clear_error) begin
            state_q <= S_IDLE;
            err_q <= ERR_NONE;
            err_unit_q <= 4'd0;
          end
        end
        default: fail(ERR_ILLEGAL);
      endcase
    end
  end

  // The descriptor register: cleared with the header, so the words a short record does not carry read as 0;
  // payload word widx_q arrives in S_LOAD.
  always @(posedge clk) begin
    if (state_q == S_HDR) begin
      desc_q <= {DESC_BITS{1'b0}};
    end else if (state_q == S_LOAD) begin
      desc_q[32*widx_q +: 32] <= prog_rd_data;
    end
  end

  // ---- the random stream between ops ----
  always @(posedge clk) begin
    if (rst) begin
      lfsr_q <= SEED_XOR;
    end else if (seed_load && !running) begin
      lfsr_q <= ((seed ^ SEED_XOR) == 32'd0) ? 32'd1 : (seed ^ SEED_XOR);
    end else if (state_q == S_WAIT && unit_done[unit_q] && !unit_q[1]) begin  // units 0 and 1 draw
      lfsr_q <= unit_lfsr[32*unit_q[0] +: 32];
    end
  end

  // ---- performance counters ----
  reg [63:0] cycles_q;
  reg [63:0] unit_cycles_q [0:3];
  reg [31:0] ops_q;
  wire       in_unit = (state_q == S_START) || (state_q == S_WAIT);
  integer    u;
  always @(posedge clk) begin
    if (rst || clear_counters) begin
      cycles_q <= 64'd0;
      ops_q <= 32'd0;
      sat_total_q <= 32'd0;
      for (u = 0; u < 4; u = u + 1) begin
        unit_cycles_q[u] <= 64'd0;
      end
    end else begin
      if (running) begin
        cycles_q <= cycles_q + 64'd1;
      end
      if (in_unit) begin
        unit_cycles_q[unit_q] <= unit_cycles_q[unit_q] + 64'd1;
      end
      if (state_q == S_STAT) begin
        ops_q <= ops_q + 32'd1;
        sat_total_q <= total_sum[32] ? 32'hFFFF_FFFF : total_sum[31:0];
      end
    end
  end

  assign lfsr_state = lfsr_q;
  assign busy = running;
  assign done = done_q;
  assign error = (state_q == S_ERR);
  assign error_code = err_q;
  assign error_unit_code = err_unit_q;
  assign error_pc = pc_q;
  assign pc = pc_q;
  assign desc = desc_q;
  assign unit = unit_q;
  assign unit_start = (state_q == S_START) ? (4'b0001 << unit_q) : 4'b0000;
  assign unit_seed_load = (state_q == S_SEED);
  assign unit_seed = lfsr_q ^ SEED_XOR;
  assign cycles = cycles_q;
  assign unit_cycles = {unit_cycles_q[3], unit_cycles_q[2], unit_cycles_q[1], unit_cycles_q[0]};
  assign ops = ops_q;
  assign sat_total = sat_total_q;

endmodule
`default_nettype wire
